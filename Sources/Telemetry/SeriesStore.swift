import Synchronization

/// The series of one metric family by label values: created on first use, then reused. An unlabeled family
/// has exactly one series, reached without a lock.
final class SeriesStore<Series: AnyObject & Sendable>: Sendable {
    let metricName: String
    let labelNames: [String]
    private let single: Series?
    private let byLabels: Mutex<[[String]: Series]>
    private let make: @Sendable () -> Series

    init(metricName: String, labelNames: [String], make: @escaping @Sendable () -> Series) {
        self.metricName = metricName
        self.labelNames = labelNames
        self.make = make
        single = labelNames.isEmpty ? make() : nil
        byLabels = Mutex([:])
    }

    /// The series for `values` (one per label name, in declaration order).
    func series(_ values: [String]) -> Series {
        if let single, values.isEmpty { return single }
        precondition(values.count == labelNames.count,
                     "\(metricName) has labels \(labelNames) but got \(values.count) values \(values)")
        return byLabels.withLock { all in
            if let existing = all[values] { return existing }
            let created = make()
            all[values] = created
            return created
        }
    }

    /// Every series with its label values, ordered by them.
    func all() -> [(labels: [String], series: Series)] {
        if let single { return [([], single)] }
        return byLabels.withLock { all in all.map { (labels: $0.key, series: $0.value) } }
            .sorted { $0.labels.lexicographicallyPrecedes($1.labels) }
    }
}
