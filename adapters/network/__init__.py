"""The network side: the Kafka wire codec, broker listeners and the controller's channels."""
