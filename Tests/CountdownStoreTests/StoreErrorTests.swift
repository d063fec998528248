import CountdownStore
import Postgres
import Testing

/// How a failed store call is read by the callers that decide on it (`StoreError(classifying:)`).
@Suite struct StoreErrorTests {
    static func failure(_ code: PostgresError.Code = .queryFailed, state: String? = nil, message: String? = nil,
                        constraint: String? = nil) -> PostgresError {
        PostgresError(code: code, what: "query", sqlState: state, message: message, constraint: constraint)
    }

    static func code(_ error: any Error) -> StoreError.Code? { StoreError(classifying: error)?.code }

    @Test func readsTheFailuresTheAPIAnswersSpecially() {
        #expect(Self.code(Self.failure(.connectionLost)) == .unreachable)
        #expect(Self.code(Self.failure(.connectionFailed)) == .unreachable)
        #expect(Self.code(Self.failure(.closed)) == .unreachable, "a closed client is as good as an unreachable server")
        #expect(Self.code(Self.failure(state: "57P01")) == .unreachable)
        #expect(Self.code(Self.failure(state: "55P03", message: "canceling statement due to lock timeout")) == .lockTimeLimit)
        #expect(Self.code(Self.failure(state: "57014", message: "canceling statement due to statement timeout")) == .timeLimit)
        #expect(Self.code(Self.failure(state: "23503", constraint: "devices_user_id_fkey")) == .missingUser)
        #expect(Self.code(Self.failure(state: "23503", constraint: "live_activity_sessions_stream_id_fkey")) == .missingStream)
    }

    @Test func readsAFaultOfTheRowsWithItsReason() {
        #expect(StoreError.rowDataReason(of: Self.failure(.decodeFailed, message: "not a date")) == "decode: not a date")
        #expect(StoreError.rowDataReason(of: Self.failure(state: "22008", message: "timestamp out of range"))
                == "data (SQLSTATE 22008): timestamp out of range")
        #expect(StoreError.rowDataReason(of: Self.failure(.connectionLost)) == nil, "a fault of the system is retried, not quarantined")
        #expect(StoreError.rowDataReason(of: StoreError(.rowData, context: "read stream s: decode: x")) == "read stream s: decode: x")
    }

    @Test func leavesEverythingElseUnread() {
        #expect(Self.code(Self.failure(state: "57014", message: "canceling statement due to user request")) == nil)
        #expect(Self.code(Self.failure(state: "23503", constraint: "other_fkey")) == nil)
        #expect(Self.code(Self.failure(state: "40P01")) == nil, "a deadlock is an unexpected failure here, as before")
        #expect(Self.code(Self.failure(state: "23505")) == nil)
        #expect(Self.code(CancellationError()) == nil)
        #expect(Self.code(StoreError(.raced, context: "x")) == .raced, "a store error reads as itself")
    }

    @Test func transienceComesFromTheCode() {
        for code: StoreError.Code in [.raced, .unreachable, .timeLimit, .lockTimeLimit] {
            #expect(StoreError(code, context: "").isTransient, "\(code)")
        }
        for code: StoreError.Code in [.missingUser, .missingStream, .rowData] {
            #expect(!StoreError(code, context: "").isTransient, "\(code)")
        }
    }
}
