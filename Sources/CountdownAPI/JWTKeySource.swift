import BlockingIO
import Foundation
import JWT
import Telemetry

/// The verifier of the moment: fixed keys (`API_JWT_SECRET` / `API_JWT_PUBLIC_KEY_FILE`) plus the keys of
/// `API_JWT_KEYS` (a JWKS file, or a directory of `<kid>.pem` public keys), re-read when they change.
///
/// At most once per `checkInterval` a request stats the key file (or each `.pem` of the directory, following
/// symbolic links, as Kubernetes mounts Secrets); when a size or modification time differs, the keys are
/// loaded again and `generation` goes up, so tokens verified under the old key set are verified again
/// (a key removed from the set stops working at once). A reload that fails keeps the previous keys, logs
/// the problem and counts it; the process keeps serving.
public final class JWTKeySource: Sendable {
    /// A verifier and the generation of the key set it holds.
    public struct Current: Sendable {
        public let verifier: JWTVerifier
        public let generation: Int
    }

    private struct State {
        var current: Current
        var fingerprint: [String]
        var nextCheck: ContinuousClock.Instant
    }

    public let keysPath: String?
    public let checkInterval: Duration
    private let makeVerifier: @Sendable ([VerificationKey]) -> JWTVerifier
    private let fixedKeys: [VerificationKey]
    private let logger: Logger
    private let reloadFailures: Counter?
    private let state: Locked<State>

    /// - Parameters:
    ///   - fixedKeys: keys that never change (may be empty when `keysPath` is set).
    ///   - keysPath: a JWKS file or a directory of PEM public keys named `<kid>.pem`.
    ///   - makeVerifier: builds the verifier (issuer, audience, lifetime, clock) for a key set.
    /// - Throws: `JWTError` when the key set cannot be loaded at start, or holds no key at all.
    public init(
        fixedKeys: [VerificationKey], keysPath: String?, checkInterval: Duration = .seconds(5), logger: Logger,
        reloadFailures: Counter? = nil, makeVerifier: @escaping @Sendable ([VerificationKey]) -> JWTVerifier
    ) throws {
        self.keysPath = keysPath
        self.checkInterval = checkInterval
        self.fixedKeys = fixedKeys
        self.makeVerifier = makeVerifier
        self.logger = logger
        self.reloadFailures = reloadFailures
        let fingerprint = keysPath.map(Self.fingerprint) ?? []
        let loaded = try keysPath.map(Self.load) ?? []
        guard !(fixedKeys + loaded).isEmpty else {
            throw JWTError(.invalidKey, "no verification key (the key set is empty)", source: keysPath)
        }
        state = Locked(State(
            current: Current(verifier: makeVerifier(fixedKeys + loaded), generation: 0), fingerprint: fingerprint,
            nextCheck: .now + checkInterval))
    }

    /// The current verifier; re-reads the key set first when it is time to look and it changed.
    public func current() -> Current {
        let now = ContinuousClock.now
        let due = state.withLock { state -> [String]? in
            guard keysPath != nil, now >= state.nextCheck else { return nil }
            state.nextCheck = now + checkInterval
            return state.fingerprint
        }
        if let previous = due, let keysPath {
            let fingerprint = Self.fingerprint(keysPath)
            if fingerprint != previous { reload(keysPath, fingerprint: fingerprint) }
        }
        return state.withLock { $0.current }
    }

    private func reload(_ path: String, fingerprint: [String]) {
        do {
            let keys = fixedKeys + (try Self.load(path))
            guard !keys.isEmpty else { throw JWTError(.invalidKey, "the key set is empty", source: path) }
            let generation = state.withLock { state -> Int in
                state.current = Current(verifier: makeVerifier(keys), generation: state.current.generation + 1)
                state.fingerprint = fingerprint
                return state.current.generation
            }
            logger.info("JWT keys reloaded", ["path": .string(path), "keys": .int(keys.count), "generation": .int(generation)])
        } catch {
            state.withLock { $0.fingerprint = fingerprint }  // retried when the files change again
            reloadFailures?.increment()
            logger.error("JWT keys not reloaded; the previous keys stay in use", [
                "path": .string(path), "error": .string((error as? JWTError)?.description ?? "\(error)"),
            ])
        }
    }

    /// Keys from a JWKS file, or from every `<kid>.pem` in a directory (RSA keys verify RS256, P-256 keys ES256).
    static func load(_ path: String) throws -> [VerificationKey] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw JWTError(.invalidKey, "no such file or directory", source: path)
        }
        guard isDirectory.boolValue else {
            guard let data = FileManager.default.contents(atPath: path) else { throw JWTError(.invalidKey, "cannot be read", source: path) }
            return try JSONWebKeySet.keys(from: data, source: path)
        }
        return try pemFiles(in: path).map { name in
            let file = (path as NSString).appendingPathComponent(name)
            let kid = String(name.dropLast(4))
            let key = try AsymmetricKey.publicKey(file: file)
            switch key.kind {
            case .rsa: return try .rs256(key, keyID: kid)
            case .ec(curve: "prime256v1"): return try .es256(key, keyID: kid)
            default: throw JWTError(.invalidKey, "neither an RSA nor a P-256 public key", source: file)
            }
        }
    }

    private static func pemFiles(in directory: String) throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        return names.filter { $0.hasSuffix(".pem") && !$0.hasPrefix(".") && $0.count > 4 }.sorted()
    }

    /// Size and modification time of the file, or of each key file of the directory.
    static func fingerprint(_ path: String) -> [String] {
        func stamp(_ file: String) -> String {
            var info = stat()
            guard stat(file, &info) == 0 else { return "\(file):missing" }
            return "\(file):\(info.st_size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec):\(info.st_ino)"
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [stamp(path)] }
        return ((try? pemFiles(in: path)) ?? []).map { stamp((path as NSString).appendingPathComponent($0)) }
    }
}
