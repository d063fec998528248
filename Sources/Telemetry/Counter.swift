import Synchronization

/// A monotonically increasing count, by label values. Keep a `Series` handle (from `labels`) on hot paths: an
/// increment on it is one relaxed atomic add.
public final class Counter: MetricFamily {
    public final class Series: Sendable {
        private let count = Atomic<UInt64>(0)

        public func increment(by amount: UInt64 = 1) { count.wrappingAdd(amount, ordering: .relaxed) }

        public var value: UInt64 { count.load(ordering: .relaxed) }
    }

    public let name: String
    public let help: String
    public var labelNames: [String] { store.labelNames }
    var typeName: String { "counter" }
    private let store: SeriesStore<Series>

    init(name: String, help: String, labelNames: [String]) {
        self.name = name
        self.help = help
        store = SeriesStore(metricName: name, labelNames: labelNames) { Series() }
    }

    /// The series for these label values (one per declared label, in order).
    public func labels(_ values: String...) -> Series { store.series(values) }

    /// The series for these label values.
    public func labels(_ values: [String]) -> Series { store.series(values) }

    public func increment(by amount: UInt64 = 1, labels values: String...) { store.series(values).increment(by: amount) }

    /// The current count of a series (0 if never used).
    public func value(labels values: String...) -> UInt64 { store.series(values).value }

    func renderSamples(into out: inout String) {
        for (values, series) in store.all() {
            out += name + PrometheusText.labelSet(labelNames, values) + " " + String(series.value) + "\n"
        }
    }
}
