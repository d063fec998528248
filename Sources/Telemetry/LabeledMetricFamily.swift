/// What every stored metric family shares: its name, help and label names, and its series by label values
/// (created on first use). `Counter`, `Gauge` and `Histogram` add their operations and how one series renders.
public class LabeledMetricFamily<Series: AnyObject & Sendable>: MetricFamily, @unchecked Sendable {
    public let name: String
    public let help: String
    public var labelNames: [String] { store.labelNames }
    let typeName: String
    private let store: SeriesStore<Series>

    init(name: String, help: String, labelNames: [String], typeName: String, makeSeries: @escaping @Sendable () -> Series) {
        self.name = name
        self.help = help
        self.typeName = typeName
        store = SeriesStore(metricName: name, labelNames: labelNames, make: makeSeries)
    }

    /// The series for these label values (one per declared label, in order). Keep it on hot paths: using it
    /// takes no lock.
    public func labels(_ values: String...) -> Series { store.series(values) }

    /// The series for these label values.
    public func labels(_ values: [String]) -> Series { store.series(values) }

    func renderSamples(into out: inout String) {
        for (values, series) in store.all() { renderSamples(of: series, labels: values, into: &out) }
    }

    /// Appends the sample lines of one series.
    func renderSamples(of series: Series, labels values: [String], into out: inout String) {
        preconditionFailure("\(typeName) \(name) does not render its series")
    }
}
