"""Decision records read in place (issue 26): which files the ``[records]`` table names
(:mod:`.walk`, remembered by :mod:`.listing`), read as decisions (:mod:`.folders`) under ids
of their own (:mod:`.ids`), each record's format (:mod:`.formats`), and the table
``init --records`` adds (:mod:`.setting`)."""

from .folders import Records, read_records, record_files, record_ids, record_stats
from .formats import STATES, Record, is_record_path, parse_day, parse_record, record_id
from .ids import ids_of, renamed_ids, taken_ids
from .listing import MAX_BYTES, from_data, listing, to_data
from .setting import add_folders, folder_setting
from .walk import MAX_FILES, MAX_NAMES, TABLE, Listing

__all__ = [
    "MAX_BYTES",
    "MAX_FILES",
    "MAX_NAMES",
    "STATES",
    "TABLE",
    "Listing",
    "Record",
    "Records",
    "add_folders",
    "folder_setting",
    "from_data",
    "ids_of",
    "is_record_path",
    "listing",
    "parse_day",
    "parse_record",
    "read_records",
    "record_files",
    "record_id",
    "record_ids",
    "record_stats",
    "renamed_ids",
    "taken_ids",
    "to_data",
]
