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
