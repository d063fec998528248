/// The fakes' flags and their environment variables: a flag wins over its variable.
enum FlagValues {
    /// Flag → value from `arguments` (`--flag value` or `--flag=value`) over `environment` (`names`: flag → variable);
    /// nil when `--help` was asked for.
    static func read(arguments: [String], environment: [String: String], names: [String: String]) throws(UsageError) -> [String: String]? {
        var values: [String: String] = [:]
        for (flag, variable) in names {
            if let value = environment[variable], !value.isEmpty { values[flag] = value }
        }
        var index = 0
        while index < arguments.count {
            var flag = arguments[index]
            var value: String?
            if let equals = flag.firstIndex(of: "="), flag.hasPrefix("--") {
                value = String(flag[flag.index(after: equals)...])
                flag = String(flag[..<equals])
            }
            if flag == "--help" || flag == "-h" { return nil }
            guard names[flag] != nil else { throw UsageError("unknown option \(flag) (see --help)") }
            if value == nil {
                index += 1
                guard index < arguments.count else { throw UsageError("\(flag) needs a value") }
                value = arguments[index]
            }
            values[flag] = value
            index += 1
        }
        return values
    }

    /// An integer flag within `range`, or nil when not given.
    static func integer(_ text: String?, flag: String, range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError("\(flag) must be an integer in \(range.lowerBound)...\(range.upperBound), got \"\(text)\"")
        }
        return value
    }
}
