import CountdownDomain
import CountdownFlows
import Push
import PushPayloads

/// The flows' `ChannelService` on Apple's API (`APNsChannels`): push results become flow decisions as for token pushes.
struct APNsChannelService: ChannelService {
    let channels: APNsChannels

    func createChannel() async -> Delivery {
        TransportPushGateway.delivery(await channels.create(), kind: .update)
    }

    func deleteChannel(_ channelID: String) async -> Delivery {
        TransportPushGateway.delivery(await channels.delete(channelID), kind: .update)
    }

    func listChannels() async -> (outcome: Delivery, channels: [String]) {
        let (result, listed) = await channels.list()
        return (TransportPushGateway.delivery(result, kind: .update), listed)
    }

    func broadcast(_ payload: LiveActivityPayload, on channelID: String) async -> Delivery {
        TransportPushGateway.delivery(await channels.broadcast(channelID: channelID, apnsHeaders: payload.apnsHeaders, apsJSON: payload.apsJSON),
                                      kind: payload.event == .end ? .end : .update)
    }
}
