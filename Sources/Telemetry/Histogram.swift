import Synchronization

/// Observations counted into fixed buckets (upper bounds, inclusive, plus +Inf), with their sum and count.
public final class Histogram: LabeledMetricFamily<Histogram.Series>, @unchecked Sendable {
    /// Latency buckets in seconds, 5 ms to 10 s.
    public static let defaultBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    public final class Series: Sendable {
        struct Snapshot {
            /// Cumulative counts per bound, then +Inf (which equals `count`).
            var cumulative: [UInt64]
            var sum: Double
        }

        private struct State {
            var counts: [UInt64]
            var sum: Double = 0
        }

        private let bounds: [Double]
        private let state: Mutex<State>

        init(bounds: [Double]) {
            self.bounds = bounds
            state = Mutex(State(counts: Array(repeating: 0, count: bounds.count + 1)))
        }

        /// Counts `value` in the first bucket whose bound is ≥ it (NaN is ignored).
        public func observe(_ value: Double) {
            guard !value.isNaN else { return }
            var low = 0
            var high = bounds.count
            while low < high {
                let mid = (low + high) / 2
                if value <= bounds[mid] { high = mid } else { low = mid + 1 }
            }
            state.withLock {
                $0.counts[low] += 1
                $0.sum += value
            }
        }

        /// Observes a duration in seconds.
        public func observe(_ duration: Duration) {
            let (seconds, attoseconds) = duration.components
            observe(Double(seconds) + Double(attoseconds) / 1e18)
        }

        func snapshot() -> Snapshot {
            let (counts, sum) = state.withLock { ($0.counts, $0.sum) }
            var running: UInt64 = 0
            return Snapshot(cumulative: counts.map { running += $0; return running }, sum: sum)
        }
    }

    /// The finite upper bounds, ascending.
    public let buckets: [Double]
    /// The `le` label values: the bounds, then `+Inf`.
    private let bucketLabels: [String]

    init(name: String, help: String, labelNames: [String], buckets: [Double]) {
        self.buckets = buckets
        bucketLabels = buckets.map(PrometheusText.number) + ["+Inf"]
        super.init(name: name, help: help, labelNames: labelNames, typeName: "histogram") { Series(bounds: buckets) }
    }

    public func observe(_ value: Double, labels values: String...) { labels(values).observe(value) }

    public func observe(_ duration: Duration, labels values: String...) { labels(values).observe(duration) }

    override func renderSamples(of series: Series, labels values: [String], into out: inout String) {
        let snapshot = series.snapshot()
        for (bound, count) in zip(bucketLabels, snapshot.cumulative) {
            out += name + "_bucket" + PrometheusText.labelSet(labelNames, values, extra: ("le", bound)) + " \(count)\n"
        }
        let labels = PrometheusText.labelSet(labelNames, values)
        out += name + "_sum" + labels + " " + PrometheusText.number(snapshot.sum) + "\n"
        out += name + "_count" + labels + " \(snapshot.cumulative.last ?? 0)\n"
    }
}
