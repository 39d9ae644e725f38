"""Memory published to other portals and by other engines: the Backstage TechDocs source of
``memsite build --techdocs`` (:mod:`.techdocs`), the trigger syntax of TechDocs' markdown
extensions made text (:mod:`.inert`), the catalog entity that points Backstage at it
(:mod:`.catalog`), the whole site built by Zensical (:mod:`.zensical`, issue 38), and where
a build or an export may write (:mod:`.folders`)."""
