import Foundation

/// Typed, validated reads of environment variables. Every failure names the variable.
public struct Environment: Sendable {
    public let values: [String: String]

    public init(_ values: [String: String] = ProcessInfo.processInfo.environment) {
        self.values = values
    }

    public func string(_ name: String, default fallback: String? = nil) throws -> String {
        if let value = values[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty { return value }
        if let fallback { return fallback }
        throw ConfigError(.missing, variable: name, problem: "is required but not set")
    }

    public func optionalString(_ name: String) -> String? {
        guard let value = values[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        return value
    }

    public func integer(_ name: String, default fallback: Int, range: ClosedRange<Int>) throws -> Int {
        guard let raw = optionalString(name) else { return fallback }
        guard let value = Int(raw) else {
            throw ConfigError(.invalid, variable: name, problem: "must be a whole number, got \"\(raw)\"")
        }
        guard range.contains(value) else {
            throw ConfigError(.invalid, variable: name, problem: "must be between \(range.lowerBound) and \(range.upperBound), got \(value)")
        }
        return value
    }

    public func choice<T: RawRepresentable & CaseIterable>(_ name: String, default fallback: T) throws -> T where T.RawValue == String {
        guard let raw = optionalString(name) else { return fallback }
        guard let value = T(rawValue: raw.lowercased()) else {
            let allowed = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw ConfigError(.invalid, variable: name, problem: "must be one of \(allowed), got \"\(raw)\"")
        }
        return value
    }

    /// A `scheme://…` URL whose scheme is one of `schemes`.
    public func url(_ name: String, schemes: Set<String>, default fallback: String? = nil) throws -> String {
        let value = try string(name, default: fallback)
        guard let components = URLComponents(string: value), let scheme = components.scheme?.lowercased(),
              schemes.contains(scheme), components.host?.isEmpty == false else {
            let expected = schemes.sorted().map { "\($0)://host:port" }.joined(separator: " or ")
            throw ConfigError(.invalid, variable: name, problem: "must look like \(expected)")
        }
        return value
    }

    /// `host:port`, e.g. `0.0.0.0:9090`.
    public func address(_ name: String, default fallback: String) throws -> String {
        let value = try string(name, default: fallback)
        guard let colon = value.lastIndex(of: ":"), let port = Int(value[value.index(after: colon)...]),
              (0...65535).contains(port), colon != value.startIndex else {
            throw ConfigError(.invalid, variable: name, problem: "must be host:port, got \"\(value)\"")
        }
        return value
    }

    /// A readable file path.
    public func file(_ name: String) throws -> String {
        let path = try string(name)
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ConfigError(.unreadableFile, variable: name, problem: "file \(path) does not exist or is not readable")
        }
        return path
    }
}
