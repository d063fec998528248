import Foundation
import Testing
import TestSupport

extension ChaosSuite {
    /// SIGKILL one of three workers mid-burst, no restart: the survivors take its work over; the last start arrives at
    /// most 10 s after the kill, duplicated ≤ its pushes in flight.
    @Test("15. SIGKILL one worker mid-burst, survivors take over")
    func scenario15Takeover() async throws {
        try await ChaosScenario.run(
            number: 15, title: "SIGKILL one worker mid-burst, survivors take over", settings: ["JOB_LEASE_SECONDS": "30"],
            latencyMilliseconds: 200
        ) { s in
            try await s.startWorkers(3)
            let due = try await s.seed(s.size(600, 3000))
            try await s.waitUntil(due + 0.3)
            var sending: [(worker: SystemWorker, id: String, rows: Int)] = []
            for worker in s.system.workers {
                let id = try await worker.workerID()
                let rows = try await s.system.query(
                    "SELECT count(*) AS n FROM countdown_start_ledger WHERE claimed_by = $1 AND status = 'sending'", [id])[0].decode("n", as: Int.self)
                sending.append((worker, id, rows))
            }
            let busiest = sending.max { $0.rows < $1.rows }!
            let killed = ChaosScenario.now
            let kills = [(at: killed, inFlight: try await s.killAndRecord(busiest.worker))]
            s.system.retire(busiest.worker)
            try await s.waitQuiet(timeout: s.size(60, 120))
            try s.reportKills(kills)
            let last = s.tally.startTimes(prefix: s.prefix).max() ?? killed
            let firstTakeover = s.workerLogLines("took over a dead worker's jobs").map(ChaosScenario.logTime).min()
            s.note("killed \(busiest.id) \(ChaosScenario.signed(killed - due, 1))s after the due second; its jobs handed back "
                   + (firstTakeover.map { "\(ChaosScenario.fixed($0 - killed, 1))s after the kill" } ?? "by lease expiry")
                   + "; last start \(ChaosScenario.fixed(last - killed, 1))s after the kill")
            s.check(last - killed <= 10, "last start at most 10 s after the kill (\(ChaosScenario.fixed(last - killed, 1))s)")
            return nil
        }
    }
}
