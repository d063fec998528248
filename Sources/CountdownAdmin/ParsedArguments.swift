import CountdownMaintenance

/// Command-line arguments split into positionals and `--flags` (`--name value` or `--name=value`), validated
/// against what a subcommand accepts before anything touches a database.
public struct ParsedArguments: Sendable, Equatable {
    public var positionals: [String]
    public var flags: [String: String]

    /// - Parameters:
    ///   - booleanFlags: flags that take no value (`--json`, `--yes`).
    ///   - valueFlags: flags that take a value (`--limit 10`).
    public init(_ arguments: [String], booleanFlags: Set<String>, valueFlags: Set<String> = []) throws(UsageError) {
        positionals = []
        flags = [:]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument.count > 2 else {
                if argument == "-h" {
                    flags["help"] = "true"
                } else {
                    positionals.append(argument)
                }
                continue
            }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if name == "help" || booleanFlags.contains(name) {
                guard value == nil else { throw UsageError("--\(name) takes no value") }
                flags[name] = "true"
            } else if valueFlags.contains(name) {
                if value == nil {
                    guard index < arguments.count else { throw UsageError("--\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                flags[name] = value
            } else {
                throw UsageError("unknown option --\(name)")
            }
        }
    }

    public func has(_ flag: String) -> Bool { flags[flag] != nil }

    /// Takes every `--<name> value` / `--<name>=value` out of `arguments`, for a flag that may repeat or that every
    /// command takes; a last `--<name>` without a value stays in `rest`.
    public static func extract(_ name: String, from arguments: [String]) -> (values: [String], rest: [String]) {
        var values: [String] = []
        var rest: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" + name, index < arguments.count {
                values.append(arguments[index])
                index += 1
            } else if argument.hasPrefix("--\(name)=") {
                values.append(String(argument.dropFirst(name.count + 3)))
            } else {
                rest.append(argument)
            }
        }
        return (values, rest)
    }

    /// Exactly `count` positionals, named in the error when missing or extra.
    public func expectPositionals(_ names: [String]) throws(UsageError) {
        if positionals.count < names.count {
            throw UsageError("missing <\(names[positionals.count])>")
        }
        if positionals.count > names.count {
            throw UsageError("unexpected argument \"\(positionals[names.count])\"")
        }
    }
}

/// Checks for ids given on the command line: non-empty, printable, bounded.
public enum IdentifierRule {
    public static func validate(_ value: String, what: String) throws(UsageError) {
        guard !value.isEmpty, value.utf8.count <= 200, !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw UsageError("\(what) must be 1-200 printable characters")
        }
    }
}
