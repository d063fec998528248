import Foundation
import Testing
import TestSupport

/// `CountdownSystem.injectRawJob`: bytes written straight into the system's queue, due now.
@Suite struct RawJobTests {
    @Test func injectedJobsAreDueNowInTheSystemsQueue() async throws {
        var options = SystemOptions()
        options.name = "h5"
        let system = try await CountdownSystem(options)
        do {
            try await system.injectRawJob("start:h5.readable", data: Array("start".utf8) + [0] + Array(#"{"stream":"h5.readable"}"#.utf8))
            try await system.injectRawJob("start:h5.unreadable", data: [0xFF, 0xFE, 0x00])
            let counts = try await system.queueStats()
            #expect(counts.claimableNow == 2 && counts.delayed == 0 && counts.leased == 0 && counts.dead == 0, "\(counts)")
            #expect(try await system.queuedJobs(kind: "start").contains("start:h5.readable"))
            #expect(system.queueKey("due").bytes == Array("{\(system.namespace)}:q1:due".utf8))
        } catch {
            await system.stop()
            throw error
        }
        await system.stop()
    }
}
