import Foundation
import HTTPServer
import Lifecycle
import Synchronization
import Telemetry

/// The HTTP API of the integration guide: routes each request, checks auth and bodies, calls the store, and
/// answers JSON. Every answer is counted in the metrics; tokens and bodies are never logged.
public final class APIService: Sendable {
    let store: any APIStore
    let authenticator: Authenticator
    let metrics: APIMetrics
    let logger: Logger
    let policy: APIPolicy
    let userWrites: KeyedRateLimiter?
    let addressWrites: KeyedRateLimiter?
    let anonymousWrites: KeyedRateLimiter?
    private let clock = ContinuousClock()
    let deadlines = RequestDeadlines()
    private let inFlight = Atomic<Int>(0)
    private let draining = Atomic<Bool>(false)
    private let requestEnded = Doorbell()

    public init(store: any APIStore, authenticator: Authenticator, metrics: APIMetrics, logger: Logger, policy: APIPolicy = APIPolicy()) {
        self.store = store
        self.authenticator = authenticator
        self.metrics = metrics
        self.logger = logger
        self.policy = policy
        userWrites = policy.writesPerMinutePerUser.map { KeyedRateLimiter(perMinute: $0, burst: $0) }
        addressWrites = policy.writesPerMinutePerIP.map { KeyedRateLimiter(perMinute: $0, burst: $0) }
        anonymousWrites = policy.anonymousWritesPerMinute.map { KeyedRateLimiter(perMinute: $0, burst: $0) }
    }

    /// Answers one request (the `HTTPServer` async handler).
    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        inFlight.add(1, ordering: .relaxed)
        defer {
            if inFlight.subtract(1, ordering: .relaxed).newValue == 0 && isDraining { requestEnded.ring() }
        }
        let started = clock.now
        let matched = Route.match(request.path)
        let response: HTTPResponse
        if let matched {
            response = await withDeadline(policy.requestTimeout, route: matched.route) {
                await self.answer(request, route: matched.route, parameters: matched.parameters)
            }
        } else {
            response = APIError(.notFound, "no route for \(request.path.prefix(200))").response
        }
        let elapsed = started.duration(to: clock.now)
        let routeLabel = matched?.route.rawValue ?? Route.unmatchedLabel
        metrics.record(route: routeLabel, method: request.method, status: response.status, duration: elapsed)
        logger.debug("request", [
            "method": .string(request.method), "route": .string(routeLabel), "status": .int(response.status),
            "seconds": .seconds(elapsed),
        ])
        return response
    }

    private func answer(_ request: HTTPRequest, route: Route, parameters: [String]) async -> HTTPResponse {
        guard request.method == route.method else {
            var response = APIError(.methodNotAllowed, "\(route.rawValue) answers \(route.method) only").response
            response.headers["Allow"] = route.method
            return response
        }
        do {
            if route.isWrite { try limitAddress(request) }
            switch route {
            case .deviceToken: return try await registerDevice(request)
            case .sessions: return try await registerSession(request)
            case .session: return try await removeSession(request, streamID: parameters[0], deviceID: parameters[1])
            case .cancelStream: return try await cancelStream(request, streamID: parameters[0])
            case .liveActivityChannel: return try await liveActivityChannel(request, streamID: parameters[0])
            case .healthz: return .json(["status": "ok"])
            case .readyz: return try await readiness()
            }
        } catch let error as APIError {
            if error.code.status >= 500, error != Self.notReady {  // readiness logs its own reason
                logger.error("request failed", ["route": .string(route.rawValue), "error": .string(error.message)])
            }
            return error.response
        } catch is CancellationError {
            // Its deadline passed (the answer has gone out already) and its statement was cancelled.
            return APIError(.timeout, "the request was not answered in time; it is safe to repeat").response
        } catch {
            logger.error("request failed", ["route": .string(route.rawValue), "error": .error(error)])
            return APIError(.internalError, "the request could not be completed; it has been logged").response
        }
    }

    /// `/metrics` (served on its own listener, `API_METRICS_ADDR`, never on the public port).
    public func metricsResponse() -> HTTPResponse {
        .text(metrics.registry.render(), contentType: MetricsRegistry.contentType)
    }

    /// Requests being answered right now.
    public var requestsInFlight: Int { inFlight.load(ordering: .relaxed) }

    /// From now on `/readyz` answers 503, so load balancers stop sending new requests; others are still served.
    public func beginDraining() { draining.store(true, ordering: .relaxed) }

    var isDraining: Bool { draining.load(ordering: .relaxed) }

    /// After `beginDraining`: returns once no request is being answered (true) or the task is cancelled.
    public func waitUntilIdle() async -> Bool {
        while requestsInFlight > 0 && !Task.isCancelled { await requestEnded.wait() }
        return requestsInFlight == 0
    }

    /// Fires request deadlines (`API_REQUEST_TIMEOUT_SECONDS`): a service of the process's group, stopped last.
    public var deadlineService: any Service { deadlines }

    /// `{"success": true}`, encoded once.
    static let success = HTTPResponse.jsonBody(Data(#"{"success":true}"#.utf8))
}
