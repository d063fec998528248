/// A gauge whose values are computed at scrape time by a closure (label values → value).
final class ComputedGauge: MetricFamily {
    let name: String
    let help: String
    let labelNames: [String]
    var typeName: String { "gauge" }
    private let compute: @Sendable () -> [[String]: Double]

    init(name: String, help: String, labelNames: [String], compute: @escaping @Sendable () -> [[String]: Double]) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
        self.compute = compute
    }

    func renderSamples(into out: inout String) {
        let samples = compute().filter { $0.key.count == labelNames.count }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        for (values, value) in samples {
            out += name + PrometheusText.labelSet(labelNames, values) + " " + PrometheusText.number(value) + "\n"
        }
    }
}
