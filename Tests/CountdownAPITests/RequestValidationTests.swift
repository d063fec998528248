import CountdownAPI
import Foundation
import Testing

@Suite("Request bodies, limits and routing")
struct RequestValidationTests {
    let store = InMemoryAPIStore()
    let api: TestAPI

    init() throws {
        api = try TestAPI(store: store)
        store.state.withLock { $0.users = ["u1"] }
    }

    func register(_ body: [String: Any], bearer: String? = nil) async -> TestAPI.Reply {
        await api.send("POST", "/notifications/device-token", json: body, bearer: bearer)
    }

    func validBody() -> [String: Any] {
        ["token": Sample.fcmToken(), "platform": "ios", "deviceId": Sample.deviceID(), "timezone": "Europe/Istanbul",
         "liveActivityPushToStartToken": Sample.hexToken(bytes: 80)]
    }

    @Test func malformedJSONIs400() async throws {
        for text in ["{", "not json", "[1,2]", "\"text\"", "42", ""] {
            let reply = await api.send("POST", "/notifications/device-token", body: Data(text.utf8), contentType: "application/json")
            #expect(reply.status == 400, "\(text)")
            #expect(reply.errorCode == "malformed_json")
        }
    }

    @Test func wrongTypesAre400NamingTheField() async throws {
        for (field, value) in [("token", 5), ("platform", true), ("deviceId", ["a"]), ("timezone", 1.5), ("locale", ["x": 1])] as [(String, Any)] {
            var body = validBody()
            body[field] = value
            let reply = await register(body)
            #expect(reply.status == 400, "\(field)")
            #expect(reply.errorCode == "wrong_type")
            #expect(reply.errorField == field)
        }
    }

    @Test func nonJSONIs415() async throws {
        let data = try JSONSerialization.data(withJSONObject: validBody())
        for type in [nil, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data"] {
            let reply = await api.send("POST", "/notifications/device-token", body: data, contentType: type)
            #expect(reply.status == 415, "\(type ?? "none")")
            #expect(reply.errorCode == "unsupported_media_type")
        }
        let charset = await api.send("POST", "/notifications/device-token", body: data, contentType: "application/json; charset=utf-8")
        #expect(charset.succeeded)
    }

    @Test func bodyOverTheLimitIs413() async throws {
        var body = validBody()
        body["padding"] = String(repeating: "x", count: 17 * 1024)
        let reply = await register(body)
        #expect(reply.status == 413)
        #expect(reply.errorCode == "payload_too_large")
    }

    @Test func unknownFieldsAreIgnoredAndNullOrEmptyMeansAbsent() async throws {
        var body = validBody()
        body["appVersion"] = "5.1.0"
        body["nested"] = ["a": [1, 2]]
        body["timezone"] = NSNull()
        body["locale"] = ""
        #expect(await register(body).succeeded)
    }

    @Test func deviceModelsAreRejectedAsDeviceIDs() async throws {
        for model in ["iphone-15-pro-max", "iPhone15,2", "SM-G991B", "iPhone 15 Pro", "Pixel 8 Pro", "galaxy-s23-ultra", "VOG-L29",
                      "iPad13,4", "x86_64", "ios", "android"] {
            var body = validBody()
            body["deviceId"] = model
            let reply = await register(body)
            #expect(reply.status == 422, "\(model)")
            #expect(reply.errorField == "deviceId")
            #expect(reply.errorMessage.contains("device model"), "\(model): \(reply.errorMessage)")
        }
    }

    @Test func stableIDsAreAccepted() async throws {
        for id in [UUID().uuidString, "a1b2c3d4e5f60718", "ios-550e8400-e29b-41d4-a716-446655440000", "dXNlcl9pbnN0YWxsXzE0Mzk:install"] {
            var body = validBody()
            body["deviceId"] = id
            #expect(await register(body).succeeded, "\(id)")
        }
    }

    @Test func placeholderAndShortDeviceIDsAreRejected() async throws {
        for id in ["00000000-0000-0000-0000-000000000000", "short", "has spaces in it 123456", "slash/in/the/middle/1234", String(repeating: "ab", count: 70)] {
            var body = validBody()
            body["deviceId"] = id
            let reply = await register(body)
            #expect(reply.status == 422, "\(id)")
            #expect(reply.errorField == "deviceId")
        }
    }

    @Test func tokensMustHaveTheirFormats() async throws {
        let cases: [(String, String)] = [
            ("token", "short"), ("token", String(repeating: "a", count: 40) + "!"), ("token", String(repeating: "a", count: 4097)),
            ("liveActivityPushToStartToken", "xyz" + Sample.hexToken()), ("liveActivityPushToStartToken", "abc"),
            ("liveActivityPushToStartToken", Sample.hexToken() + "a"), ("liveActivityPushToStartToken", Sample.hexToken(bytes: 257)),
            ("timezone", "Mars/Olympus"), ("timezone", "../../etc/passwd"), ("locale", "english language"), ("platform", "IOS"),
            ("platform", "windows"),
        ]
        for (field, value) in cases {
            var body = validBody()
            body[field] = value
            let reply = await register(body)
            #expect(reply.status == 422, "\(field)=\(value.prefix(30))")
            #expect(reply.errorField == field)
        }
    }

    @Test func guideRulesOnPushToStartTokens() async throws {
        var noDevice = validBody()
        noDevice["deviceId"] = nil
        let missing = await register(noDevice)
        #expect(missing.status == 422)
        #expect(missing.errorField == "deviceId")
        #expect(missing.errorMessage.contains("liveActivityPushToStartToken"))

        var android = validBody()
        android["platform"] = "android"
        #expect(await register(android).errorField == "liveActivityPushToStartToken")
        android["liveActivityPushToStartToken"] = nil
        #expect(await register(android).succeeded)

        let nothing = await register(["platform": "ios", "deviceId": Sample.deviceID()])
        #expect(nothing.status == 422)
        #expect(nothing.errorField == "token")
        #expect(await register(["token": Sample.fcmToken(), "deviceId": Sample.deviceID()]).errorField == "platform")
    }

    @Test func pushToStartOnlyUpdateNeedsAnExistingDevice() async throws {
        let deviceID = Sample.deviceID()
        let update: [String: Any] = ["platform": "ios", "deviceId": deviceID, "liveActivityPushToStartToken": Sample.hexToken()]
        let unknown = await register(update)
        #expect(unknown.status == 404)
        #expect(unknown.errorCode == "device_not_found")
        var full = validBody()
        full["deviceId"] = deviceID
        #expect(await register(full).succeeded)
        #expect(await register(update).succeeded)
    }

    @Test func sessionBodiesAreChecked() async throws {
        let bearer = try api.token("u1")
        let good: [String: Any] = ["streamId": "s1", "deviceId": Sample.deviceID(), "liveActivityToken": Sample.hexToken()]
        for field in ["streamId", "deviceId", "liveActivityToken"] {
            var body = good
            body[field] = nil
            let reply = await api.send("POST", "/notifications/live-activity-sessions", json: body, bearer: bearer)
            #expect(reply.status == 422)
            #expect(reply.errorField == field)
        }
        for (field, value) in [("liveActivityToken", "not-hex-at-all-but-long-enough-0000000"), ("activityId", "has space"),
                               ("streamId", String(repeating: "s", count: 129))] {
            var body = good
            body[field] = value
            let reply = await api.send("POST", "/notifications/live-activity-sessions", json: body, bearer: bearer)
            #expect(reply.status == 422, "\(field)")
            #expect(reply.errorField == field)
        }
        var typed = good
        typed["activityId"] = 12
        #expect(await api.send("POST", "/notifications/live-activity-sessions", json: typed, bearer: bearer).status == 400)
    }

    @Test func authIsCheckedBeforeTheBody() async throws {
        let reply = await api.send("POST", "/notifications/live-activity-sessions", body: Data("{".utf8), contentType: "application/json")
        #expect(reply.status == 401)
    }

    @Test func unknownRoutesAre404AndWrongMethods405() async throws {
        for path in ["/", "/notifications", "/notifications/device-token/extra", "/live-stream//cancel", "/healthz/"] {
            let reply = await api.send("GET", path)
            #expect(reply.status == 404, "\(path)")
            #expect(reply.errorCode == "not_found")
        }
        let wrong = await api.send("GET", "/notifications/device-token")
        #expect(wrong.status == 405)
        #expect(wrong.headers["Allow"] == "POST")
        #expect(wrong.errorCode == "method_not_allowed")
    }

    @Test func healthReadinessAndMetrics() async throws {
        #expect(await api.send("GET", "/healthz").json["status"] as? String == "ok")
        #expect(await api.send("GET", "/readyz").status == 200)
        store.state.withLock { $0.reachable = false }
        let down = await api.send("GET", "/readyz")
        #expect(down.status == 503)
        #expect(down.errorCode == "unavailable")
        #expect(down.errorMessage == "not ready", "the body says nothing about the database")
        #expect(down.headers["Retry-After"] != nil)
        _ = await register(validBody())
        _ = await api.send("GET", "/nowhere")
        #expect(await api.send("GET", "/metrics").status == 404, "metrics are not on the public port")
        let metrics = String(decoding: api.service.metricsResponse().body, as: UTF8.self)
        #expect(metrics.contains(#"countdown_api_requests_total{route="/notifications/device-token",method="POST",status="200"} 1"#))
        #expect(metrics.contains(#"countdown_api_requests_total{route="/readyz",method="GET",status="503"} 1"#))
        #expect(metrics.contains(#"countdown_api_requests_total{route="unmatched",method="GET",status="404"} 2"#))
        #expect(metrics.contains(#"countdown_api_request_duration_seconds_bucket{route="/notifications/device-token",le="+Inf"} 1"#))
    }
}
