"""Prints every scalar of one TensorBoard run as 'tag step value' lines, read with
TensorBoard's own event accumulator (used by tensorboard_writer_test when installed)."""
import sys

from tensorboard.backend.event_processing import event_accumulator

accumulator = event_accumulator.EventAccumulator(sys.argv[1], size_guidance={event_accumulator.SCALARS: 0})
accumulator.Reload()
for tag in sorted(accumulator.Tags()["scalars"]):
    for event in accumulator.Scalars(tag):
        print(tag, event.step, "%g" % event.value)
