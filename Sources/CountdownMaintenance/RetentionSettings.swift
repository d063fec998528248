import Configuration

/// How long Countdown keeps its own rows, and how the pruner deletes them (SPEC 12.3): `RETENTION_DAYS` after a
/// stream first left `scheduled` its rows go, audit rows after `AUDIT_RETENTION_DAYS`, token invalidations after
/// `RETENTION_DAYS`; at most `RETENTION_BATCH_ROWS` rows per statement, one run per `RETENTION_INTERVAL_SECONDS`
/// fleet-wide.
public struct RetentionSettings: Sendable, Equatable {
    /// The longest retention either variable accepts (ten years).
    public static let maxDays = 3650.0

    public var days: Double = 30
    public var auditDays: Double = 365
    public var batchRows: Int = 1000
    public var intervalSeconds: Int = 300

    /// `RETENTION_DAYS` in seconds (0.002 days is about 3 minutes).
    public var seconds: Double { days * 86_400 }
    /// `AUDIT_RETENTION_DAYS` in seconds.
    public var auditSeconds: Double { auditDays * 86_400 }

    /// Reads the four variables; each problem names its variable.
    static func load(_ env: Environment, into problems: inout [ConfigError]) -> RetentionSettings {
        let defaults = RetentionSettings()
        func read<T>(_ body: () throws -> T, default fallback: T) -> T { ConfigProblems.reading(body, into: &problems) ?? fallback }
        return RetentionSettings(
            days: read({ try env.positiveDecimal("RETENTION_DAYS", default: defaults.days, atMost: maxDays) }, default: defaults.days),
            auditDays: read({ try env.positiveDecimal("AUDIT_RETENTION_DAYS", default: defaults.auditDays, atMost: maxDays) },
                            default: defaults.auditDays),
            batchRows: read({ try env.integer("RETENTION_BATCH_ROWS", default: defaults.batchRows, range: 1...100_000) }, default: defaults.batchRows),
            intervalSeconds: read({ try env.integer("RETENTION_INTERVAL_SECONDS", default: defaults.intervalSeconds, range: 1...86_400) },
                                  default: defaults.intervalSeconds))
    }
}
