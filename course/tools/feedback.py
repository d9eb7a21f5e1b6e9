"""nbgrader preprocessor for feedback: keep what a student may see of a failed test.

A failed test cell's traceback quotes source lines around the failing statement, and for a hidden
test those lines are the hidden test itself. We keep only "ErrorName: message"; the messages of
hidden tests are generic by construction (see `llmlab.checks.hidden`).
"""

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool


class CleanTestTracebacks(Preprocessor):
    # nbconvert registers preprocessors disabled unless they say otherwise.
    enabled = Bool(True).tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
        return cell, resources
