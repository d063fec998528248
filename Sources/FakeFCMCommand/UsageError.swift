/// A bad flag, environment value or service account: the process stops with exit code 2.
struct UsageError: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
