import Synchronization

/// A monotonically increasing count, by label values. Keep a `Series` handle (from `labels`) on hot paths: an
/// increment on it is one relaxed atomic add.
public final class Counter: LabeledMetricFamily<Counter.Series>, @unchecked Sendable {
    public final class Series: Sendable {
        private let count = Atomic<UInt64>(0)

        public func increment(by amount: UInt64 = 1) { count.wrappingAdd(amount, ordering: .relaxed) }

        public var value: UInt64 { count.load(ordering: .relaxed) }
    }

    init(name: String, help: String, labelNames: [String]) {
        super.init(name: name, help: help, labelNames: labelNames, typeName: "counter") { Series() }
    }

    public func increment(by amount: UInt64 = 1, labels values: String...) { labels(values).increment(by: amount) }

    /// The current count of a series (0 if never used).
    public func value(labels values: String...) -> UInt64 { labels(values).value }

    override func renderSamples(of series: Series, labels values: [String], into out: inout String) {
        out += name + PrometheusText.labelSet(labelNames, values) + " " + String(series.value) + "\n"
    }
}
