import Foundation
import CLibPQ

extension PostgresError {
    /// The error for a connection attempt that did not reach `CONNECTION_OK`.
    static func connectFailed(_ connection: OpaquePointer?, what: String) -> PostgresError {
        let message = connection.map(errorMessage) ?? "libpq could not allocate a connection"
        let timedOut = message.contains("timeout expired")
        return PostgresError(code: timedOut ? .timeout : .connectionFailed, what: what, message: message)
    }

    /// The error for a failed libpq call on an open connection: a statement result (possibly NULL) or a
    /// status code. A broken connection makes it `connectionLost` whatever the call was.
    static func callFailed(_ result: OpaquePointer?, connection: OpaquePointer, what: String) -> PostgresError {
        let lost = PQstatus(connection) != CONNECTION_OK
        guard let result else {
            return PostgresError(code: lost ? .connectionLost : .queryFailed, what: what, message: errorMessage(connection))
        }
        let sqlState = field(result, "C")
        let primary = field(result, "M") ?? nonEmpty(PQresultErrorMessage(result)) ?? errorMessage(connection)
        return PostgresError(
            code: lost ? .connectionLost : .queryFailed, what: what, sqlState: sqlState, message: primary,
            detail: field(result, "D"), constraint: field(result, "n")
        )
    }

    private static func field(_ result: OpaquePointer, _ code: Unicode.Scalar) -> String? {
        nonEmpty(PQresultErrorField(result, Int32(code.value)))
    }

    private static func errorMessage(_ connection: OpaquePointer) -> String {
        nonEmpty(PQerrorMessage(connection)) ?? "unknown libpq error"
    }

    private static func nonEmpty(_ text: UnsafePointer<CChar>?) -> String? {
        guard let text else { return nil }
        let value = String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
        return value.isEmpty ? nil : value
    }
}
