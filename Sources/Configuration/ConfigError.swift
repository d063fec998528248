/// A configuration value that is missing or invalid; `description` is the one line printed at start.
public struct ConfigError: Error, CustomStringConvertible, Equatable {
    public enum Code: String, Sendable { case missing, invalid, unreadableFile }
    public let code: Code
    public let variable: String
    public let problem: String

    public init(_ code: Code, variable: String, problem: String) {
        self.code = code
        self.variable = variable
        self.problem = problem
    }

    public var description: String { "\(variable): \(problem)" }
}

/// Every configuration problem found at start, one line each.
public struct ConfigProblems: Error, CustomStringConvertible {
    public let problems: [ConfigError]

    public init(problems: [ConfigError]) { self.problems = problems }

    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
