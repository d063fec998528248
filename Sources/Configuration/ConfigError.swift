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

    /// `body`'s value, or nil with what it threw added to `problems` (a `ConfigError`, each problem of a
    /// `ConfigProblems`, anything else as one invalid entry under `variable`), so that a loader reports every
    /// problem at once.
    public static func reading<T>(_ body: () throws -> T, into problems: inout [ConfigError], variable: String = "?") -> T? {
        do { return try body() } catch let error as ConfigError {
            problems.append(error)
        } catch let error as ConfigProblems {
            problems += error.problems
        } catch {
            problems.append(ConfigError(.invalid, variable: variable, problem: "\(error)"))
        }
        return nil
    }
}
