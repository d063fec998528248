/// A logging or metrics configuration value that cannot be used.
public struct TelemetryError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// An environment variable holds a value outside its allowed set.
        case invalidEnvironment
    }

    public var code: Code
    /// The variable, e.g. `LOG_LEVEL`.
    public var variable: String
    public var value: String
    /// What would have been accepted.
    public var expected: String

    public init(_ code: Code, variable: String, value: String, expected: String) {
        self.code = code
        self.variable = variable
        self.value = value
        self.expected = expected
    }

    public var description: String { "\(variable)=\"\(value)\" is invalid: expected \(expected)" }
}
