import BlockingIO
import CountdownDomain
import CountdownFlows

/// Runs jobs through the flows: start jobs claimed together share one fan-out; anything else runs alone.
public struct FlowJobRunner: JobRunner {
    public let handler: JobHandler
    var transient: @Sendable (any Error) -> Bool = BlockingIO.isTransient

    public func run(_ jobs: [CountdownJob]) async -> [Result<HandlerOutcome, any Error>] {
        let streams = jobs.compactMap { job -> String? in
            if case .start(let stream) = job { return stream }
            return nil
        }
        if jobs.count > 1 && streams.count == jobs.count {
            do {
                let outcomes = try await handler.handleStarts(streams)
                return streams.map { .success(outcomes[$0] ?? .skipped(reason: "stream_missing")) }
            } catch where transient(error) {
                return jobs.map { _ in .failure(error) }
            } catch {
                // One bad stream must not cost the others an attempt: run each on its own.
            }
        }
        var results: [Result<HandlerOutcome, any Error>] = []
        for job in jobs {
            do { results.append(.success(try await handler.handle(job))) } catch { results.append(.failure(error)) }
        }
        return results
    }
}
