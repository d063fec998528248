import BlockingIO
import Postgres
import Testing

@Suite struct PostgresErrorTransientTests {
    private func error(_ code: PostgresError.Code, sqlState: String? = nil) -> PostgresError {
        PostgresError(code: code, what: "test", sqlState: sqlState)
    }

    @Test(arguments: [
        (PostgresError.Code.connectionLost, nil as String?), (.connectionFailed, nil), (.timeout, nil),
        (.queryFailed, "08006"), (.queryFailed, "57P01"), (.queryFailed, "40001"), (.queryFailed, "40P01"),
        (.queryFailed, "57014"), (.queryFailed, "55P03"),
    ])
    func transient(code: PostgresError.Code, sqlState: String?) {
        #expect(error(code, sqlState: sqlState).isTransient)
        #expect(isTransient(error(code, sqlState: sqlState)))
    }

    @Test(arguments: [
        (PostgresError.Code.queryFailed, "23505" as String?), (.queryFailed, "42601"), (.queryFailed, nil),
        (.invalidURL, nil), (.invalidParameter, nil), (.decodeFailed, nil), (.invalidState, nil), (.closed, nil),
    ])
    func permanent(code: PostgresError.Code, sqlState: String?) {
        #expect(!error(code, sqlState: sqlState).isTransient)
        #expect(!isTransient(error(code, sqlState: sqlState)))
    }

    @Test func otherErrorsAreNotTransient() {
        #expect(!isTransient(CancellationError()))
    }
}
