import Synchronization

/// Observations counted into fixed buckets (upper bounds, inclusive, plus +Inf), with their sum and count.
public final class Histogram: MetricFamily {
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

    public let name: String
    public let help: String
    public var labelNames: [String] { store.labelNames }
    /// The finite upper bounds, ascending.
    public let buckets: [Double]
    var typeName: String { "histogram" }
    private let store: SeriesStore<Series>

    init(name: String, help: String, labelNames: [String], buckets: [Double]) {
        self.name = name
        self.help = help
        self.buckets = buckets
        store = SeriesStore(metricName: name, labelNames: labelNames) { Series(bounds: buckets) }
    }

    /// The series for these label values (one per declared label, in order).
    public func labels(_ values: String...) -> Series { store.series(values) }

    /// The series for these label values.
    public func labels(_ values: [String]) -> Series { store.series(values) }

    public func observe(_ value: Double, labels values: String...) { store.series(values).observe(value) }

    public func observe(_ duration: Duration, labels values: String...) { store.series(values).observe(duration) }

    func renderSamples(into out: inout String) {
        let bounds = buckets.map(PrometheusText.number) + ["+Inf"]
        for (values, series) in store.all() {
            let snapshot = series.snapshot()
            for (bound, count) in zip(bounds, snapshot.cumulative) {
                out += name + "_bucket" + PrometheusText.labelSet(labelNames, values, extra: ("le", bound)) + " \(count)\n"
            }
            let labels = PrometheusText.labelSet(labelNames, values)
            out += name + "_sum" + labels + " " + PrometheusText.number(snapshot.sum) + "\n"
            out += name + "_count" + labels + " \(snapshot.cumulative.last ?? 0)\n"
        }
    }
}
