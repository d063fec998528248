extension PostgresConfiguration {
    /// This configuration with run-time parameters every session sets at connect (`statement_timeout`,
    /// `lock_timeout`, ...), sent as `-c name=value` in libpq's `options` after any the URL gave.
    public func withSessionSettings(_ settings: [String: String]) -> PostgresConfiguration {
        var configuration = self
        configuration.sessionSettings.merge(settings) { $1 }
        return configuration
    }

    /// The libpq `options` value: the URL's, then `-c name=value` for each session setting (spaces and
    /// backslashes in values escaped with a backslash, as libpq expects).
    var libpqOptions: String? {
        let settings = sessionSettings.sorted { $0.key < $1.key }.map { name, value in
            "-c " + name + "=" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: " ", with: "\\ ")
        }
        let all = (options["options"].map { [$0] } ?? []) + settings
        return all.isEmpty ? nil : all.joined(separator: " ")
    }
}
