import CountdownDomain
import PushPayloads

extension FlowContext {
    /// The pushes to `rows`, one each in order, and the rows they go to. A row `push` has none for (no FCM token) is
    /// counted as skipped for `kind` and `platform`; one whose push cannot be built is logged (`what` could not be
    /// built, with its `device`); both are `unreachable`. `push` is given the row's language.
    func pushes<Row>(to rows: [Row], kind: String, platform: String, what: String, device: (Row) -> String,
                     locales: (Row) -> (device: String?, user: String?), _ push: (Row, PayloadLanguage) throws -> OutgoingPush?)
        -> (pushes: [OutgoingPush], addressed: [Row], unreachable: [Row]) {
        var built: (pushes: [OutgoingPush], addressed: [Row], unreachable: [Row]) = ([], [], [])
        for row in rows {
            do {
                let (deviceLocale, userLocale) = locales(row)
                if let one = try push(row, PayloadLanguage.resolve(deviceLocale: deviceLocale, userLocale: userLocale)) {
                    built.pushes.append(one)
                    built.addressed.append(row)
                    continue
                }
                metrics.skip(kind: kind, reason: "no_fcm_token", platform: platform)
            } catch {
                logger.error("\(what) could not be built", ["device": .string(device(row)), "error": .error(error)])
            }
            built.unreachable.append(row)
        }
        return built
    }

    /// The FCM token a live activity push goes with: nil when the transport needs one (FCM) and the device has none.
    func liveActivityFCM(_ token: String?) -> String? {
        let fcm = token ?? ""
        return fcm.isEmpty && transport != .apns ? nil : fcm
    }

    /// Writes one batch's accepted `rows` as its answers arrive (`write`), so a crash repeats only what is out. False
    /// when the write failed (logged: `what` deliveries could not be recorded): the caller writes them with the
    /// fan-out's outcome instead, and until then a crash would repeat these too.
    func recordArrived<Row>(_ rows: [Row], what: String, stream: String, _ write: ([Row]) async throws -> Void) async -> Bool {
        guard !rows.isEmpty else { return true }
        do {
            try await write(rows)
            return true
        } catch {
            logger.warn("\(what) deliveries could not be recorded as they arrived", ["stream": .string(stream), "error": .error(error)])
            return false
        }
    }
}
