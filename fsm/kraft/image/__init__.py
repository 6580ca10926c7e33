"""The metadata image: what replaying metadata records builds. The active controller, the
standby controllers and the brokers all replay through ``MetadataImage.apply``; a snapshot
(``snapshot_records``) is the smallest list of records that rebuilds an equal image."""

from fsm.kraft.image.brokers import BrokerRegistration, membership_of
from fsm.kraft.image.image import ImageError, MetadataImage
from fsm.kraft.image.partitions import PartitionImage, TopicImage
from fsm.kraft.image.snapshot import image_from_records, snapshot_records

__all__ = ["BrokerRegistration", "ImageError", "MetadataImage", "PartitionImage", "TopicImage",
           "image_from_records", "membership_of", "snapshot_records"]
