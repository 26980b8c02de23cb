"""Every property with teeth: the matrix of must-fail models against properties.

* :mod:`.properties`: the spec's properties, with EWD 864's statement each expresses;
* :mod:`.matrix`: one check per (model, property) cell, in TLC and the Python model,
  against what ``spec/manifest.json`` says each model must violate and satisfy;
* :mod:`.theorem`: z3 on "Lemma 0 implies Lemma 1 when the application is undisturbed";
* :mod:`.docs`: ``docs/teeth.md`` and the teeth-matrix section of ``docs/proofs.md``.
"""
