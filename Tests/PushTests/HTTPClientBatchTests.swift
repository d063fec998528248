import BlockingIO
import Foundation
import HTTPClient
import Testing
import TestSupport

/// `HTTPClient.sendAll`: requests sent together, the caller woken once with every outcome in order.
@Suite struct HTTPClientBatchTests {
    @Test func outcomesComeBackInRequestOrderWhateverOrderTheyAnswerIn() async throws {
        let server = try TestHTTPServer()
        let client = try HTTPClientTests.client()
        // The first request answers last: order follows the requests, not the answers.
        let requests = [HTTPRequest(url: server.baseURL + "/sleep/300")]
            + (0..<20).map { HTTPRequest(url: server.baseURL + "/status/\(200 + $0)") }
            + [HTTPRequest(method: .post, url: server.baseURL + "/echo", body: Array("last".utf8))]
        let outcomes = await client.sendAll(requests)
        #expect(outcomes.count == 22)
        #expect(try outcomes[0].get().bodyText == "slept")
        for index in 1...20 { #expect(try outcomes[index].get().status == 199 + index) }
        let echo = try JSONDecoder().decode(HTTPClientTests.Echo.self, from: Data(try outcomes[21].get().body))
        #expect(echo.body == "last")
        #expect(client.inFlight == 0)
    }

    @Test func oneFailedRequestFailsAloneInItsBatch() async throws {
        let server = try TestHTTPServer()
        let client = try HTTPClientTests.client()
        let refusing = RefusingPort()
        defer { refusing.release() }
        let outcomes = await client.sendAll([
            HTTPRequest(method: .post, url: server.baseURL + "/ok"),
            HTTPRequest(url: "http://\(refusing.address)/refused"),
            HTTPRequest(url: server.baseURL + "/close"),
            HTTPRequest(url: server.baseURL + "/status/503"),
        ])
        #expect(try outcomes[0].get().status == 200)
        #expect(outcomes[1].failure?.code == .connectionRefused)
        #expect(outcomes[2].failure != nil)
        #expect(try outcomes[3].get().status == 503)
    }

    @Test func anEmptyBatchAsksNothing() async throws {
        let client = try HTTPClientTests.client()
        #expect(await client.sendAll([]).isEmpty)
        #expect(client.inFlight == 0)
    }

    @Test func cancellingTheTaskAbortsTheWholeBatch() async throws {
        let server = try TestHTTPServer()
        let client = try HTTPClientTests.client()
        let task = Task { await client.sendAll((0..<5).map { _ in HTTPRequest(url: server.baseURL + "/sleep/20000") }) }
        try await waitUntil("the batch is in flight") { client.inFlight == 5 }
        let started = ContinuousClock.now
        task.cancel()
        let outcomes = await task.value
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(outcomes.count == 5 && outcomes.allSatisfy { $0.failure?.code == .cancelled })
        #expect(client.inFlight == 0)
    }

    @Test func eachAnswerIsToldBeforeTheSlowestArrives() async throws {
        let server = try TestHTTPServer()
        let client = try HTTPClientTests.client()
        let answers = Locked<[Int: Int?]>([:])
        let task = Task {
            await client.sendAll([HTTPRequest(url: server.baseURL + "/sleep/20000")] + (0..<3).map { _ in HTTPRequest(url: server.baseURL + "/sleep/1") },
                                 onAnswer: { index, outcome in answers.withLock { _ = $0.updateValue(try? outcome.get().status, forKey: index) } })
        }
        try await waitUntil("the three fast answers are told") { answers.value.count == 3 }
        #expect(answers.value == [1: 200, 2: 200, 3: 200], "each told with its index and outcome")
        #expect(client.inFlight == 1)
        task.cancel()
        let outcomes = await task.value
        #expect(answers.value.count == 4 && answers.value[0] == .some(nil))
        #expect(outcomes[0].failure?.code == .cancelled)
        #expect(outcomes[1...].allSatisfy { (try? $0.get().status) == 200 })
    }

    @Test func aBatchFromACancelledTaskIsCancelledWithoutBeingSent() async throws {
        let server = try TestHTTPServer()
        let client = try HTTPClientTests.client()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await client.sendAll((0..<3).map { _ in HTTPRequest(method: .post, url: server.baseURL + "/ok") })
        }
        let outcomes = await task.value
        #expect(outcomes.count == 3 && outcomes.allSatisfy { $0.failure?.code == .cancelled })
        #expect(server.connectionsAccepted == 0)
    }

    @Test func aBatchAfterShutdownFailsAtOnce() async throws {
        let client = try HTTPClientTests.client()
        client.shutdown()
        let outcomes = await client.sendAll([HTTPRequest(url: "http://127.0.0.1:1/a"), HTTPRequest(url: "http://127.0.0.1:1/b")])
        #expect(outcomes.count == 2 && outcomes.allSatisfy { $0.failure?.code == .shutdown })
    }

    @Test func aBatchLargerThanTheConnectionLimitQueuesOnTheLimit() async throws {
        let server = try TestHTTPServer()
        let client = try HTTPClientTests.client { $0.maxConnections = 4 }
        let outcomes = await client.sendAll((0..<64).map { _ in HTTPRequest(url: server.baseURL + "/sleep/5") })
        #expect(outcomes.allSatisfy { (try? $0.get().status) == 200 })
        #expect(client.connectionsOpened <= 4)
    }
}
