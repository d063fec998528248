/// A declared metric: a name, help, type and label names, with the samples of all its label sets.
protocol MetricFamily: AnyObject, Sendable {
    var name: String { get }
    var help: String { get }
    var labelNames: [String] { get }
    /// `counter`, `gauge` or `histogram`.
    var typeName: String { get }
    /// Appends the sample lines (not HELP/TYPE), series ordered by label values.
    func renderSamples(into out: inout String)
}
