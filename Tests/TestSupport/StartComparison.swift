/// The starts the fake accepted, compared with those PostgreSQL says should be sent.
public struct StartComparison: Sendable, Equatable {
    public var expected: Int
    /// Every accepted start, copies included.
    public var accepted: Int
    /// Expected but never accepted.
    public var lost: Int
    /// Extra copies of starts accepted more than once.
    public var duplicated: Int
    /// Accepted (each copy) but not expected.
    public var unexpected: Int

    public init(expected: Int, accepted: Int, lost: Int, duplicated: Int, unexpected: Int) {
        self.expected = expected
        self.accepted = accepted
        self.lost = lost
        self.duplicated = duplicated
        self.unexpected = unexpected
    }

    public static func compare(_ expected: Set<StartKey>, _ accepted: [StartKey]) -> StartComparison {
        var counts: [StartKey: Int] = [:]
        for key in accepted { counts[key, default: 0] += 1 }
        return StartComparison(
            expected: expected.count, accepted: accepted.count,
            lost: expected.filter { counts[$0] == nil }.count,
            duplicated: counts.values.reduce(0) { $0 + max($1 - 1, 0) },
            unexpected: counts.reduce(0) { $0 + (expected.contains($1.key) ? 0 : $1.value) })
    }
}
