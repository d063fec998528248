import CountdownStore
import Postgres
import Testing

/// How a failed store call is read by the callers that answer for it.
@Suite struct StoreFaultTests {
    static func failure(_ code: PostgresError.Code = .queryFailed, state: String? = nil, message: String? = nil,
                        constraint: String? = nil) -> PostgresError {
        PostgresError(code: code, what: "query", sqlState: state, message: message, constraint: constraint)
    }

    @Test func readsTheFailuresTheAPIAnswersSpecially() {
        #expect(StoreFault(Self.failure(.connectionLost)) == .unreachable)
        #expect(StoreFault(Self.failure(.connectionFailed)) == .unreachable)
        #expect(StoreFault(Self.failure(.closed)) == .unreachable, "a closed client is as good as an unreachable server")
        #expect(StoreFault(Self.failure(state: "57P01")) == .unreachable)
        #expect(StoreFault(Self.failure(state: "55P03", message: "canceling statement due to lock timeout")) == .timeLimit(lock: true))
        #expect(StoreFault(Self.failure(state: "57014", message: "canceling statement due to statement timeout")) == .timeLimit(lock: false))
        #expect(StoreFault(Self.failure(state: "23503", constraint: "devices_user_id_fkey")) == .missingUser)
        #expect(StoreFault(Self.failure(state: "23503", constraint: "live_activity_sessions_stream_id_fkey")) == .missingStream)
    }

    @Test func leavesEverythingElseUnread() {
        #expect(StoreFault(Self.failure(state: "57014", message: "canceling statement due to user request")) == nil)
        #expect(StoreFault(Self.failure(state: "23503", constraint: "other_fkey")) == nil)
        #expect(StoreFault(Self.failure(state: "40P01")) == nil, "a deadlock is an unexpected failure here, as before")
        #expect(StoreFault(Self.failure(state: "23505")) == nil)
        #expect(StoreFault(CancellationError()) == nil)
    }
}
