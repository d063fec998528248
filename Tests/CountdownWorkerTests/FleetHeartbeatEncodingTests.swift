@testable import CountdownWorker
import DelayQueue
import Foundation
import Testing

@Suite struct FleetHeartbeatEncodingTests {
    /// What a beat records is what a survivor reads back when it takes the worker's leases over.
    @Test func leasesReadBackAsTheyWere() throws {
        let leases = [JobLease(id: "start:s/1 \"ş\"", token: "t\\1\n", attempt: 3), JobLease(id: "end:s2", token: "t2", attempt: 1)]
        let encoded = FleetHeartbeat.encode(leases)
        let read = try JSONDecoder().decode([[String]].self, from: Data(encoded.utf8))
        #expect(read == leases.map { [$0.id, $0.token, String($0.attempt)] })
        #expect(FleetHeartbeat.encode([]) == "[]")
    }
}
