import CLibPQ

/// Hears the server end an idle session. libpq hands a FATAL message that arrives outside any statement (an
/// administrator's `pg_terminate_backend`, a shutdown, `idle_session_timeout`) to the notice receiver and keeps
/// the connection's status OK until the end of file that follows; the watch remembers the message, so a check
/// that reads between the two still knows the session is over.
final class PostgresGoodbyeWatch {
    /// Whether a FATAL or PANIC message arrived since the watch was installed or cleared.
    private(set) var heard = false

    /// Makes this watch the connection's notice receiver (other notices are dropped). The connection must not
    /// outlive the watch.
    func install(on connection: OpaquePointer) {
        heard = false
        PQsetNoticeReceiver(connection, { context, result in
            guard let context, let result else { return }
            Unmanaged<PostgresGoodbyeWatch>.fromOpaque(context).takeUnretainedValue().note(result)
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func note(_ notice: OpaquePointer) {
        guard let severity = PQresultErrorField(notice, Int32(UInt8(ascii: "V"))) else { return }
        switch String(cString: severity) {
        case "FATAL", "PANIC": heard = true
        default: break
        }
    }
}
