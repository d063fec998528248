import Foundation
import TestSupport

extension DeviceModelRun {
    /// Judges the settled run: the streams as PostgreSQL has them, every invariant, the duplicates against the starts
    /// in flight at the kills, the kills themselves; notes what happened and sets the scenario's counts.
    func judge(at settled: Double) async throws {
        let rows = try await s.system.query("""
            SELECT id, status, extract(epoch FROM planned_start_at)::bigint AS planned FROM streams WHERE id LIKE $1 || '%'
            """, [s.prefix])
        var final: [String: DeviceModel.FinalStream] = [:]
        let expireAfter = Double(s.system.settings["EXPIRE_AFTER_SECONDS"] ?? "") ?? 3600
        for row in rows {
            let id = try row.decode("id", as: String.self)
            let (status, planned): (String, Int) = (try row.decode("status"), try row.decode("planned"))
            // An expired stream could be ended from its planned start + EXPIRE_AFTER_SECONDS.
            let endedAt = status == "expired" ? Double(planned) + expireAfter : leftScheduled[id]
            final[id] = DeviceModel.FinalStream(status: status, planned: planned, endedAt: endedAt)
        }
        // Duplicates against the starts in flight at the kills.
        let inFlight = kills.reduce(into: Set<StartKey>()) { $0.formUnion($1.inFlight) }
        let violations = model.check(final, eligibleSince: fleet.eligibleSince, now: settled, inFlight: inFlight)
        let lost = model.lost(final, eligibleSince: fleet.eligibleSince, now: settled)
        let duplicated = violations[3]?.count ?? 0
        let outside = model.duplicates.filter { !inFlight.contains($0) }
        s.duplicateBound = kills.reduce(0) { $0 + $1.inFlight.count }
        s.duplicateBoundText = "≤ \(s.duplicateBound) in flight"
        let statuses = final.values.reduce(into: [String: Int]()) { $0[$1.status, default: 0] += 1 }
        let counted = done.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        s.note("operations: " + Self.listed(counted))
        s.note("streams at the end: " + Self.listed(statuses))
        s.note("\(kills.count) workers SIGKILLed and restarted: \(s.duplicateBound) starts in flight at the kills, \(duplicated) duplicated "
               + "(\(outside.count) outside those in flight)")
        let replayed = model.counts.filter { ["ios_", "android_", "broadcast_"].contains(where: $0.key.hasPrefix) && $0.key != "broadcast_no_subscriber" }
            .values.reduce(0, +)
        let activities = model.activities.values.reduce(0) { $0 + $1.count }
        let away = model.phones.windows.count
        s.note("\(away) phones offline for a window (\(model.counts["held", default: 0]) messages held, "
               + "\(model.counts.filter { $0.key.hasPrefix("expired_away_") }.values.reduce(0, +)) expired, \(model.counts["replaced_away", default: 0]) replaced by a newer one); "
               + "\(app.withoutDuplicateEnding.count) iPhones without the app's duplicate ending, \(app.endedDuplicates) duplicates ended by the app "
               + "(\(app.deleted) sessions deleted)")
        s.note("replayed \(replayed) pushes: " + Self.listed(model.counts) + "; \(activities) activities/countdowns, \(model.liveCount) live at the end; "
               + "\(app.registered) sessions registered (\(app.late) late)" + (app.refused > 0 ? ", \(app.refused) refused by the store" : ""))
        if apns != nil {
            noteChannels()
        }
        for (number, text) in DeviceModel.invariants {
            let found = violations[number] ?? []
            let count = number == 3 ? outside.count : found.count
            s.note("invariant \(number) (\(text)): \(found.count) " + (number == 3 ? "found" : "violations")
                   + (found.isEmpty ? "" : ": " + found.prefix(5).joined(separator: "; ")))
            if number != 3 {
                s.check(count == 0, "invariant \(number): 0 violations (\(count))")
            }
        }
        if !model.lateSessionDuplicates.isEmpty {
            s.note("\(model.lateSessionDuplicates.count) next-generation starts after a long move to a phone still showing the activity whose "
                   + "session came after the move's end (not crash duplicates; both activities ended): "
                   + model.lateSessionDuplicates.prefix(5).map { "\($0.stream) \($0.token.suffix(8))" }.joined(separator: "; "))
        }
        s.check(outside.isEmpty, "every duplicate start was in flight at a kill (\(outside.count) were not"
                + (outside.isEmpty ? ")" : ": " + outside.prefix(5).map { "\($0.stream) \($0.token.suffix(8))" }.joined(separator: "; ") + ")"))
        s.check(app.refused == 0, "every session registration was accepted (\(app.refused) refused)")
        let minimumKills = s.size(3, 8)
        s.check(kills.count >= minimumKills, "at least \(minimumKills) kills during the run (\(kills.count))")
        if !lost.isEmpty {
            s.note("eligible devices showing nothing for a scheduled stream past T-lead: "
                   + lost.prefix(5).map { "\($0.device) \($0.stream)" }.joined(separator: "; "))
        }
        let distinct = Set(model.starts.map(\.key))
        let unexpected = violations[4]?.count ?? 0
        s.counts = StartComparison(expected: distinct.count - unexpected + lost.count, accepted: model.starts.count, lost: lost.count,
                                   duplicated: duplicated, unexpected: unexpected)
        if rows.isEmpty {
            throw HarnessError("no streams found at the end")
        }
    }

    /// What the broadcast channels carried (a run on the fake APNs), and the check that they carried something.
    private func noteChannels() {
        let iphones = fleet.devices.filter { $0.value.platform == "ios" }.keys
        let newer = iphones.filter { fleet.onIOS18($0) }.count
        let onChannels = model.activities.values.joined().filter { $0.channel != nil }
        let broadcasts = model.counts.filter { $0.key.hasPrefix("broadcast_") && $0.key != "broadcast_no_subscriber" }
        s.note("broadcast channels: \(newer) of \(iphones.count) iPhones on iOS 18 or later; \(Set(model.channels.subscribers.keys).count) channels "
               + "with \(onChannels.count) activities subscribed (\(onChannels.filter { !$0.ended }.count) live at the end); broadcasts "
               + Self.listed(broadcasts) + "; \(model.counts["channel_stored_applied", default: 0]) stored messages applied on subscribing, "
               + "\(model.counts.filter { $0.key.hasPrefix("channel_stored_expired_") }.values.reduce(0, +)) found expired")
        s.check(!onChannels.isEmpty && broadcasts.values.reduce(0, +) > 0,
                "activities were started on a channel and broadcasts replayed (\(onChannels.count), \(broadcasts.values.reduce(0, +)))")
    }

    /// "key count, key count" in key order.
    static func listed(_ counts: [String: Int]) -> String {
        counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }
}
