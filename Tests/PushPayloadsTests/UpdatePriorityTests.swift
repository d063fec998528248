import Foundation
import PushPayloads
import Testing

/// SPEC 12.2's one priority rule, the same on both platforms: `apns-priority` 10 and Android `HIGH` when the new start
/// is earlier than the shown one, or the earlier of the two is 15 minutes away or less; else 5 and `NORMAL`.
@Suite struct UpdatePriorityTests {
    /// `shown` and `new`: seconds from now to the shown and the new planned start (nil: what is shown is not known).
    @Test(arguments: [
        (shown: 1800.0 as Double?, new: 3600.0, expected: UpdatePriority.conserving),
        (shown: 901, new: 3600, expected: .conserving),
        (shown: 3600, new: 3600, expected: .conserving),
        (shown: 900, new: 3600, expected: .immediate),
        (shown: 600, new: 7200, expected: .immediate),
        (shown: -60, new: 3600, expected: .immediate),
        (shown: 3600, new: 1800, expected: .immediate),
        (shown: 7200, new: 3599, expected: .immediate),
        (shown: nil, new: 3600, expected: .immediate),
    ])
    func theRule(shown: Double?, new: Double, expected: UpdatePriority) throws {
        let now = Fixtures.startNow
        let (newStart, shownStart) = (now.addingTimeInterval(new), shown.map { now.addingTimeInterval($0) })
        #expect(UpdatePriority.of(newStart: newStart, shown: shownStart, now: now) == expected)
        let builder = Fixtures.builder()
        var stream = Fixtures.stream
        stream.plannedStartAt = newStart
        let priority = UpdatePriority.of(newStart: newStart, shown: shownStart, now: now)
        let ios = try builder.update(stream, role: .guest, language: .en, now: now, priority: priority)
        #expect(ios.apnsHeaders["apns-priority"] == (expected == .immediate ? "10" : "5"))
        let android = try builder.androidUpdate(builder.prepare(stream), role: .guest, language: .en, now: now, seq: 2, shown: shownStart)
        #expect(android.priority == (expected == .immediate ? .high : .normal), "the same rule on Android")
    }
}
