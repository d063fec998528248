/// A value that goes up and down, by label values, set or adjusted by the code that knows it.
public final class Gauge: MetricFamily {
    public final class Series: Sendable {
        private let current = AtomicDouble()

        public func set(_ value: Double) { current.set(value) }

        public func add(_ delta: Double) { current.add(delta) }

        public var value: Double { current.value }
    }

    public let name: String
    public let help: String
    public var labelNames: [String] { store.labelNames }
    var typeName: String { "gauge" }
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

    public func set(_ value: Double, labels values: String...) { store.series(values).set(value) }

    public func add(_ delta: Double, labels values: String...) { store.series(values).add(delta) }

    /// The current value of a series (0 if never set).
    public func value(labels values: String...) -> Double { store.series(values).value }

    func renderSamples(into out: inout String) {
        for (values, series) in store.all() {
            out += name + PrometheusText.labelSet(labelNames, values) + " " + PrometheusText.number(series.value) + "\n"
        }
    }
}
