extension Environment {
    /// A decimal number in `range` (e.g. a ratio), or `fallback` when unset.
    public func fraction(_ name: String, default fallback: Double, range: ClosedRange<Double>) throws -> Double {
        guard let raw = optionalString(name) else { return fallback }
        guard let value = Double(raw), value.isFinite else {
            throw ConfigError(.invalid, variable: name, problem: "must be a decimal number, got \"\(raw)\"")
        }
        guard range.contains(value) else {
            throw ConfigError(.invalid, variable: name, problem: "must be between \(range.lowerBound) and \(range.upperBound), got \(value)")
        }
        return value
    }
}

extension Environment {
    /// A decimal number above zero and at most `limit` (e.g. days: `0.002` is about 3 minutes), or `fallback` when unset.
    public func positiveDecimal(_ name: String, default fallback: Double, atMost limit: Double) throws -> Double {
        guard let raw = optionalString(name) else { return fallback }
        guard let value = Double(raw), value.isFinite else {
            throw ConfigError(.invalid, variable: name, problem: "must be a decimal number, got \"\(raw)\"")
        }
        guard value > 0, value <= limit else {
            let most = limit == limit.rounded() ? String(Int(limit)) : String(limit)
            throw ConfigError(.invalid, variable: name, problem: "must be above 0 and at most \(most), got \(raw)")
        }
        return value
    }
}
