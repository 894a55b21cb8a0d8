"""The event stream (``stream``) over what each protocol holds (``sections``)."""

from runeconsole.services.events.stream import PROTOCOL, Event, EventStream, follow

__all__ = ["PROTOCOL", "Event", "EventStream", "follow"]
