"""Decision records read in place (issue 26): the ``[records]`` folders (:mod:`.folders`)
each record's format (:mod:`.formats`), and the table ``init --records`` adds
(:mod:`.setting`)."""

from .folders import MAX_BYTES, TABLE, Records, read_records, record_files, record_ids, record_stats
from .formats import STATES, Record, is_record_path, parse_day, parse_record, record_id
from .setting import add_folders, folder_setting

__all__ = [
    "MAX_BYTES",
    "STATES",
    "TABLE",
    "Record",
    "Records",
    "add_folders",
    "folder_setting",
    "is_record_path",
    "parse_day",
    "parse_record",
    "read_records",
    "record_files",
    "record_id",
    "record_ids",
    "record_stats",
]
