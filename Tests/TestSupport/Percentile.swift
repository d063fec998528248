/// Nearest-rank percentile of `values` (`fraction` in 0...1); NaN when there are none.
public func percentile(_ values: [Double], _ fraction: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let ordered = values.sorted()
    let rank = max(1, Int((fraction * Double(ordered.count) + 0.5 - 1e-9).rounded(.toNearestOrEven)))
    return ordered[min(rank, ordered.count) - 1]
}
