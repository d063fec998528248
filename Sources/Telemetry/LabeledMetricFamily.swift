import Synchronization

/// What every stored metric family shares: its name, help and label names, and its series by label values
/// (created on first use, then reused). `Counter`, `Gauge` and `Histogram` add their operations and how one series
/// renders. An unlabeled family has exactly one series, reached without a lock.
public class LabeledMetricFamily<Series: AnyObject & Sendable>: MetricFamily, @unchecked Sendable {
    public let name: String
    public let help: String
    public let labelNames: [String]
    let typeName: String
    private let single: Series?
    private let byLabels = Mutex<[[String]: Series]>([:])
    private let makeSeries: @Sendable () -> Series

    init(name: String, help: String, labelNames: [String], typeName: String, makeSeries: @escaping @Sendable () -> Series) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
        self.typeName = typeName
        self.makeSeries = makeSeries
        single = labelNames.isEmpty ? makeSeries() : nil
    }

    /// The series for these label values (one per declared label, in order). Keep it on hot paths: using it
    /// takes no lock.
    public func labels(_ values: String...) -> Series { labels(values) }

    /// The series for these label values.
    public func labels(_ values: [String]) -> Series {
        if let single, values.isEmpty { return single }
        precondition(values.count == labelNames.count, "\(name) has labels \(labelNames) but got \(values.count) values \(values)")
        return byLabels.withLock { all in
            if let existing = all[values] { return existing }
            let created = makeSeries()
            all[values] = created
            return created
        }
    }

    /// Appends the sample lines of every series, ordered by label values.
    func renderSamples(into out: inout String) {
        if let single { return renderSamples(of: single, labels: [], into: &out) }
        let all = byLabels.withLock { all in all.map { (labels: $0.key, series: $0.value) } }
        for (values, series) in all.sorted(by: { $0.labels.lexicographicallyPrecedes($1.labels) }) {
            renderSamples(of: series, labels: values, into: &out)
        }
    }

    /// Appends the sample lines of one series.
    func renderSamples(of series: Series, labels values: [String], into out: inout String) {
        preconditionFailure("\(typeName) \(name) does not render its series")
    }
}
