/// A command line or a form value that cannot be used as given (`countdown-admin` exits with code 2).
public struct UsageError: Error, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
