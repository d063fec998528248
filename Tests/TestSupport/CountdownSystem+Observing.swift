import Foundation

extension CountdownSystem {
    // MARK: Observing the fake FCM

    /// The accepted messages the fake keeps in memory, oldest first (`SystemDefaults.fakeKeep` of them at most).
    public func pushes() async throws -> [RecordedPush] {
        var all: [RecordedPush] = []
        var since = 0
        while true {
            let answer = try await fakeClient.call("GET", "/fake/messages?since=\(since)&limit=5000")
            let page = try RecordedPush.decode(answer.body)
            all += page
            guard let last = page.last, page.count == 5000 else { return all }
            since = last.seq
        }
    }

    /// Waits until the accepted pushes satisfy `condition`, then returns them.
    @discardableResult
    public func waitForPushes(timeout: Duration = .seconds(20), _ what: String, _ condition: @escaping ([RecordedPush]) -> Bool) async throws -> [RecordedPush] {
        var latest: [RecordedPush] = []
        try await waitUntil(timeout: timeout, every: .milliseconds(50), what + " (have \(latest.count) pushes)") {
            latest = try await self.pushes()
            return condition(latest)
        }
        return latest
    }

    /// Returns once the fake has answered (and recorded) the sends it had received before this call, also those of
    /// a worker killed meanwhile: the fake answers sends on one thread in the order their injected latency ends,
    /// so a send of our own made now (refused: it carries no token) is answered after them. Waiting for the record
    /// to stop growing for a while instead fails when the fake's latency thread is late on a loaded machine.
    public func waitForEarlierSends() async throws {
        _ = try await fakeClient.send(["token": "after-the-earlier-sends"], bearer: nil, project: "marker")
    }

    /// How many connections to this system's database are open under `applicationName` (see
    /// `TestDatabase.url(applicationName:)`): none once a killed worker's backends have finished their statements.
    public func backends(applicationName: String) async throws -> Int {
        try await query("""
            SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = $1
            """, [applicationName])[0].decode("n", as: Int.self)
    }

    /// Adds a fault rule to the fake (`POST /fake/faults`).
    public func fault(_ rule: [String: Any]) async throws { try await fakeClient.fault(rule) }

    /// Removes every fault rule (`DELETE /fake/faults`).
    public func clearFaults() async throws {
        let answer = try await fakeClient.call("DELETE", "/fake/faults")
        guard (200..<300).contains(answer.status) else { throw UnexpectedAnswer(what: "DELETE /fake/faults", answer: answer.text) }
    }

    /// The fake's counters (`GET /fake/stats`).
    public func fakeStats() async throws -> [String: Any] {
        let answer = try await fakeClient.call("GET", "/fake/stats")
        guard answer.status == 200 else { throw UnexpectedAnswer(what: "GET /fake/stats", answer: answer.text) }
        return answer.json
    }
}
