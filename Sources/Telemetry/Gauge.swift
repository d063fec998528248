/// A value that goes up and down, by label values, set or adjusted by the code that knows it.
public final class Gauge: LabeledMetricFamily<Gauge.Series>, @unchecked Sendable {
    public final class Series: Sendable {
        private let current = AtomicDouble()

        public func set(_ value: Double) { current.set(value) }

        public func add(_ delta: Double) { current.add(delta) }

        public var value: Double { current.value }
    }

    init(name: String, help: String, labelNames: [String]) {
        super.init(name: name, help: help, labelNames: labelNames, typeName: "gauge") { Series() }
    }

    public func set(_ value: Double, labels values: String...) { labels(values).set(value) }

    public func add(_ delta: Double, labels values: String...) { labels(values).add(delta) }

    /// The current value of a series (0 if never set).
    public func value(labels values: String...) -> Double { labels(values).value }

    override func renderSamples(of series: Series, labels values: [String], into out: inout String) {
        out += name + PrometheusText.labelSet(labelNames, values) + " " + PrometheusText.number(series.value) + "\n"
    }
}
