import Synchronization

/// The process's metrics: families are declared once (name, help, label names) and then used by label
/// values from any thread. `render()` produces the Prometheus text exposition format 0.0.4.
///
/// Declaring a name again with the same kind and labels returns the existing family; a conflicting
/// declaration, an invalid name or a wrong number of label values is a programming error and traps with a
/// message naming the metric.
public final class MetricsRegistry: Sendable {
    /// The `Content-Type` of `render()`'s output.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private let families = Mutex<[String: any MetricFamily]>([:])

    public init() {}

    public func counter(_ name: String, help: String, labels: [String] = []) -> Counter {
        declare(name, labels) { Counter(name: name, help: help, labelNames: labels) } sameAs: { _ in true }
    }

    public func gauge(_ name: String, help: String, labels: [String] = []) -> Gauge {
        declare(name, labels) { Gauge(name: name, help: help, labelNames: labels) } sameAs: { _ in true }
    }

    /// A histogram with `buckets` as finite upper bounds (strictly increasing; +Inf is implied).
    public func histogram(
        _ name: String, help: String, labels: [String] = [], buckets: [Double] = Histogram.defaultBuckets
    ) -> Histogram {
        let bounds = buckets.last == .infinity ? Array(buckets.dropLast()) : buckets
        precondition(bounds.allSatisfy(\.isFinite) && zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 },
                     "histogram \(name): buckets \(buckets) must be finite and strictly increasing")
        precondition(!labels.contains("le"), "histogram \(name): the label name \"le\" is reserved")
        return declare(name, labels) {
            Histogram(name: name, help: help, labelNames: labels, buckets: bounds)
        } sameAs: { $0.buckets == bounds }
    }

    /// All families, ordered by name, in the Prometheus text format.
    public func render() -> String {
        let all = families.withLock { Array($0.values) }.sorted { $0.name < $1.name }
        var out = ""
        for family in all {
            out += "# HELP \(family.name) \(PrometheusText.escapeHelp(family.help))\n"
            out += "# TYPE \(family.name) \(family.typeName)\n"
            family.renderSamples(into: &out)
        }
        return out
    }

    private func declare<Family: MetricFamily>(
        _ name: String, _ labels: [String], make: () -> Family, sameAs: (Family) -> Bool
    ) -> Family {
        precondition(PrometheusText.isValidMetricName(name), "invalid metric name \"\(name)\"")
        precondition(labels.allSatisfy(PrometheusText.isValidLabelName), "metric \(name): invalid label names \(labels)")
        precondition(Set(labels).count == labels.count, "metric \(name): duplicate label names \(labels)")
        return families.withLock { all in
            if let existing = all[name] {
                guard let same = existing as? Family, same.labelNames == labels, sameAs(same) else {
                    preconditionFailure("metric \(name) is already declared as a \(existing.typeName) with labels \(existing.labelNames)")
                }
                return same
            }
            let created = make()
            all[name] = created
            return created
        }
    }
}
