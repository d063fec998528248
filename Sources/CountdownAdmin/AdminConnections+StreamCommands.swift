import CountdownCommands
import CountdownDomain
import CountdownMaintenance
import DelayQueue
import Foundation
import Postgres

extension AdminConnections {
    /// Ends a stream as `StreamCommands.end` does, then removes its pre-start jobs and queues its end job at once.
    public func end(_ streamID: String, as status: StreamStatus) async throws -> StreamCommands.Report {
        try await StreamEnding.end(streamID, as: status, database: database, queue: queue)
    }
}
