import Foundation
import HTTPServer

extension FakeAPNs {
    /// Channel management: create (`POST …/channels`), read and delete (`GET`, `DELETE …/channels` with
    /// `apns-channel-id`), list (`GET …/all-channels`).
    func manageChannels(_ request: HTTPRequest, bundleID: String) throws(APNsRefusal) -> HTTPResponse {
        let listing = request.path.hasSuffix("/all-channels")
        let allowed = listing ? ["GET"] : ["POST", "GET", "DELETE"]
        guard allowed.contains(request.method) else { throw .init(status: 405, reason: "MethodNotAllowed") }
        guard bundleID == self.bundleID else { throw .init(status: 400, reason: "TopicDisallowed") }
        if listing {
            try injectedFailure(.channels, target: nil)
            return .json(object: ["channels": channels.all(bundleID: bundleID).map(\.id)])
        }
        if request.method == "POST" {
            let policy = try APNsRequestCheck.channelConfiguration(request.body).get()
            try injectedFailure(.channels, target: nil)
            guard let channel = channels.create(bundleID: bundleID, messageStoragePolicy: policy) else {
                throw .init(status: 400, reason: "CannotCreateChannelConfig")
            }
            pushes.countChannel(created: true)
            log.debug("channel created", ["channel": channel.id])
            return HTTPResponse(status: 201, headers: ["apns-channel-id": channel.id])
        }
        if let refusal = APNsRequestCheck.channelID(request) { throw refusal }
        let channelID = request.headers["apns-channel-id"] ?? ""
        try injectedFailure(.channels, target: channelID)
        if request.method == "DELETE" {
            guard channels.delete(channelID, bundleID: bundleID) else { throw .init(status: 404, reason: "ChannelNotRegistered") }
            pushes.countChannel(created: false)
            log.debug("channel deleted", ["channel": channelID])
            return .empty(status: 204)
        }
        guard let channel = channels.channel(channelID, bundleID: bundleID) else { throw .init(status: 404, reason: "ChannelNotRegistered") }
        var response = HTTPResponse.json(object: ["message-storage-policy": channel.messageStoragePolicy, "push-type": "LiveActivity"])
        response.headers["apns-channel-id"] = channel.id
        return response
    }
}
